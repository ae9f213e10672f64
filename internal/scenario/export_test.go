package scenario

// LocalServerCPU is localServerCPU, for the tests of package scenario_test.
var LocalServerCPU = localServerCPU
