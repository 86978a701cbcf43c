"""People's labels: label records in, joined with the judge's scores; agreement, prediction-powered estimates and calibration out."""
