# The Examples section of the mce() help page (calibrRef/man/mce.Rd), run against
# the reference package. The help page shows:
#>    mce
#> 1 0.15
library(calibrRef)

predictions <- data.frame(
  p = c(0.10, 0.20, 0.80, 0.90),
  y = c(0, 0, 1, 1)
)

predictions |>
  dplyr::summarise(mce = mce(p, y, bins = 2))
