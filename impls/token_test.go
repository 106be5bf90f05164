package impls_test

import (
	"fmt"
	"testing"

	"github.com/locklab/locklab/impls"
)

func ExampleNewToken() {
	token, err := impls.NewToken()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(token), "hex characters")
	// Output: 32 hex characters
}

// Tokens are owner values: two grants must never share one.
func TestNewTokenDoesNotRepeat(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		token, err := impls.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if seen[token] {
			t.Fatalf("token %s drawn twice", token)
		}
		seen[token] = true
	}
}
