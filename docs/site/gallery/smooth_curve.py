# The smoothed reliability curve of Blasiok & Nakkiran (calibr.smece_curve) over
# the binned points: no bins to choose, and its legend gives the smooth ECE.
import calibr
from calibr.datasets import load_breast_cancer_predictions
from calibr.plot import reliability_diagram

predictions = load_breast_cancer_predictions()
by_model = predictions.groupby("model", sort=False)
table = calibr.calibration_table("p", "y", data=by_model)
curves = {(model,): calibr.smece_curve(g["p"], g["y"]) for model, g in by_model}
fig = reliability_diagram(table, smooth=curves, title="Smooth reliability curves")
