module github.com/opsagent/opsagent

go 1.26.8

require (
	github.com/PagerDuty/go-pagerduty v1.8.0
	github.com/google/go-github/v84 v84.0.0
	github.com/stripe/stripe-go/v85 v85.0.0
)

require (
	github.com/google/go-querystring v1.2.0 // indirect
	github.com/stretchr/testify v1.11.1 // indirect
)
