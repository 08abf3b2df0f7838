# Reliability diagrams of three binary classifiers: one panel per model, each
# with its ECE, the Wilson interval of every bin and the bin counts beneath.
import calibr
from calibr.datasets import load_breast_cancer_predictions
from calibr.plot import reliability_diagram

predictions = load_breast_cancer_predictions()
table = calibr.calibration_table("p", "y", data=predictions.groupby("model", sort=False))
fig = reliability_diagram(table, show_ece=True, title="Breast cancer: 10 equal-width bins")
