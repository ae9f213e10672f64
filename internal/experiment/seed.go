package experiment

import "math/rand/v2"

// drawSeed draws a seed for a step that was given none; it is recorded
// with what the step stores, so the step can be reproduced. Seeds stay
// below 2^53, exact in JSON and in the store's INTEGER.
func drawSeed() uint64 { return rand.Uint64N(1<<53-1) + 1 }
