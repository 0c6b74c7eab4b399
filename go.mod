module github.com/gorpma/rpma

go 1.26.0

require (
	github.com/hashicorp/go-multierror v1.1.1
	github.com/stretchr/testify v1.12.1
	go.uber.org/zap v1.28.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/hashicorp/errwrap v1.0.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
