"""Report plane: reads the record only, computes intervals, renders one report object many ways."""
