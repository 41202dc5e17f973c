package localfs

import (
	"testing"

	"github.com/agentfs/agentfs/backend/conformance"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Backend {
		fsys, _ := newTestFS(t)
		return fsys
	})
}
