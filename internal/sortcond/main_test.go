package sortcond

import (
	"os"
	"testing"

	"github.com/singletable/singletable/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.After(m.Run())) }
