package misuse_test

import (
	"testing"

	"github.com/gorpma/rpma/internal/leak"
)

func TestMain(m *testing.M) { leak.Main(m) }
