# Classwise (R's default form): for each class k, the predicted probability of k
# against how often the label is k. One panel per model, the ten classes as curves.
import calibr
from calibr.datasets import load_digits_predictions
from calibr.plot import reliability_diagram

digits = load_digits_predictions()
table = calibr.calibration_table(
    None, "y", bins=5, data=digits.groupby("model", sort=False), p_prefix="p_"
)
fig = reliability_diagram(table, by="model", title="Digits: classwise, 5 bins")
