// libFuzzer's driver entry point (compiler-rt, linked by -sanitize=fuzzer). SwiftPM links an
// executable's `main` to `<Module>_main`, so each target defines that and hands over here.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
