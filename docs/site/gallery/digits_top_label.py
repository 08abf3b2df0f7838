# Ten classes, one curve per model: the top-label (confidence) reliability
# diagram, the probability of the predicted class against how often it is right.
import calibr
from calibr.datasets import load_digits_predictions
from calibr.plot import reliability_diagram

digits = load_digits_predictions()
table = calibr.calibration_table(
    None, "y", type="confidence", data=digits.groupby("model", sort=False), p_prefix="p_"
)
fig = reliability_diagram(table, by=[], title="Digits: confidence (each row's highest probability)")
