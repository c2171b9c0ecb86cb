#include "startup/runner.h"

int main(int argc, char** argv) { return efu::run_efu(argc, argv); }
