# The example collector: nothing but the ABI header. Copy this folder to start.
example_LIBS :=
