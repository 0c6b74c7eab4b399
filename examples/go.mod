module github.com/gorpma/rpma/examples

go 1.26.0

require (
	github.com/gorpma/rpma v0.0.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/zap v1.28.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/hashicorp/errwrap v1.0.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

// The examples are built from this repository's library, never a
// published one: the workspace (go.work at the root) says so too, and
// this line keeps it so with GOWORK=off.
replace github.com/gorpma/rpma => ../
