// Package parquetcheck holds only a test: it reads the Parquet files that
// package counts writes with an independent implementation (the Apache
// Arrow project's parquet package) and compares them with the TSV output.
// It is a package of its own so that the Arrow build is paid by this test
// alone.
package parquetcheck
