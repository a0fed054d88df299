package main

import (
	"slices"
	"testing"
)

// TestSDKEnv: the SDK's endpoint always, its service variable when set (it
// wins in the SDK), a region and keys only where the environment has none.
func TestSDKEnv(t *testing.T) {
	const u = "http://127.0.0.1:8000"
	for _, tt := range []struct {
		env  map[string]string
		want []string
	}{
		{nil, []string{"AWS_ENDPOINT_URL=" + u, "AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local"}},
		{map[string]string{"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}, []string{"AWS_ENDPOINT_URL=" + u}},
		{map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": "http://elsewhere", "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "a"},
			[]string{"AWS_ENDPOINT_URL=" + u, "AWS_ENDPOINT_URL_DYNAMODB=" + u, "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local"}},
	} {
		if got := sdkEnv(u, func(k string) string { return tt.env[k] }); !slices.Equal(got, tt.want) {
			t.Errorf("%v: %q, want %q", tt.env, got, tt.want)
		}
	}
}
