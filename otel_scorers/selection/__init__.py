"""Which runs each scorer scores: bindings, consistent sampling, budget-paced and risk-weighted sampling."""
