# The consistency band of each bin (Broecker & Smith 2007): where the observed
# frequency of a calibrated model would fall 90% of the time, given the bin's
# predictions. A point outside its band is miscalibration that chance does not
# explain.
import calibr
from calibr.datasets import load_breast_cancer_predictions
from calibr.plot import reliability_diagram

predictions = load_breast_cancer_predictions()
table = calibr.calibration_table(
    "p", "y", bins=5, data=predictions.groupby("model", sort=False), consistency=0.9, rng=0
)
fig = reliability_diagram(table, intervals=False, title="90% consistency bands, 5 bins")
