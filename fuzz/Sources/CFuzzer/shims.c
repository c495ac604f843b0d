// No logic: the header only declares libFuzzer's driver.
#include "CFuzzer.h"
