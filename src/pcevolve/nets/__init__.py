"""Network recipes shared by the run and its judges (they know tensors, not runs or data files)."""
