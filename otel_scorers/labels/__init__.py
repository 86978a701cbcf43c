"""People's labels: label records in, joined with the judge's scores (`agreement_output`, an output of the pipeline's emission); agreement, prediction-powered estimates and calibration out."""
