namespace efu {}
