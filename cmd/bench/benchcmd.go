package main

import (
	"context"
	"errors"
	"io"
)

// benchCmd runs the benchmark report (issue 5); being built in benchmark/.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("bench: the benchmark report is not built yet")
}
