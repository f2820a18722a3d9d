//go:build !linux

package testnet

import (
	"errors"
	"runtime"
)

func enterSupported() error {
	return errors.New("network namespaces are Linux's; this is " + runtime.GOOS)
}

func (n *Node) enterAndDo(func() error) error { return enterSupported() }
