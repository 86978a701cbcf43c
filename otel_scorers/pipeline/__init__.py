"""What happens to a job's runs (built, admitted, scored in lanes, emitted), on a runner that owns the thread and loop."""
