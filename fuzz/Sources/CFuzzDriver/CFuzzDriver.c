// Declarations only: libFuzzer provides the driver.
