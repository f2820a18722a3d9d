// Package graph reads and writes edge lists, cleans them into simple
// undirected graphs, orders and orients them into forward CSRs, and generates
// synthetic graphs. It is the bottom of trigrid's dependency graph: it
// imports nothing else from the project.
package graph
