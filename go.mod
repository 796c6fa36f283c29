module iosim

go 1.26.0

require (
	github.com/spf13/afero v1.15.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/term v0.48.0 // indirect
	golang.org/x/text v0.28.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
