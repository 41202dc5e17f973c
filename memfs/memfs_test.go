package memfs

import (
	"testing"

	"github.com/agentfs/agentfs/backend/conformance"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(*testing.T) conformance.Backend { return New(nil) })
}
