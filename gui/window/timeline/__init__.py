"""The timeline of calls: its Qt model over the core's read model, its view, filter, cells and Gantt column."""
