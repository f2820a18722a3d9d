// Package gen generates synthetic edge lists for benchmarks and tests.
//
// Every generator is parallel and deterministic: the output is cut into
// fixed chunks, each drawn from its own random stream seeded from (seed,
// chunk index), so the same seed gives the same edges, in the same order,
// whatever the number of workers.
package gen
