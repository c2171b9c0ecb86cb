// A shared object without the entry symbol: the host must say it is not an efu plugin.
extern "C" __attribute__((visibility("default"))) int not_an_efu_entry() { return 42; }
