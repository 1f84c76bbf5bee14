# The daemon's folders, top to bottom, and what each may include besides
# its own headers and lib/'s (docs/architecture.md). Each folder is
# compiled with only these -I paths, and tools/checksrc reads this file to
# refuse an include that breaks them. exporter/ itself (the daemon's
# start-up and wiring) and the tests see every folder.
EXPORTER_LAYERS := web run processing model config expo out base
web_MAY    := run processing model config expo out base
run_MAY    := model config expo out base
processing_MAY := model config expo out base
model_MAY  := expo out base
config_MAY := expo base
expo_MAY   := out base
out_MAY    := base
base_MAY   :=
