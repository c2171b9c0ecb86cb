"""efu-monitor: consumes a detector's ev44 and x5f2 topics and shows what efu publishes."""
