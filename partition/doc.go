// Package partition cuts a forward graph into P x P blocks and enumerates
// the P^3 subtasks (I, J, K) that count its triangles block by block.
//
// Two schemes, both over the forward graph whose ids are degree ranks:
//
//   - hash (TRUST, section 5): group(x) = x mod P, local(x) = x div P. Ranks
//     interleave across groups, so every group gets the same mix of low and
//     high degree vertices and all P^2 blocks hold similar edge counts.
//   - range (TriX "2D managed", section IV): ids are cut into Fold*P
//     ranges dealt to the groups in boustrophedon order, so each group
//     holds low and high ranks and every block can fill (with one range
//     per group a forward graph leaves blocks with I > J empty and the
//     rest cannot be evened out); the cuts are chosen so that the largest
//     block is as small as possible. Local ids number a group's ids in
//     rank order.
//
// Block B[I][J] holds the forward edges (u, v) with u in group I and v in
// group J as a CSR whose rows are I-local and columns J-local
// (NCols = size of group J). Subtask (I, J, K) intersects, for each edge
// (u, v) of B[I][J], row u of B[I][K] with row v of B[J][K]; a triangle
// a < b < c is found by the one subtask (group a, group b, group c).
//
// The package builds blocks in memory (Split), writes them as shards with a
// manifest (PartitionGraph, PartitionFile), and has an external-memory path
// that produces byte-identical shards from an edge file larger than memory.
package partition
