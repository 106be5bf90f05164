package impls

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// NewToken returns 128 unguessable bits from crypto/rand, hex-encoded (32
// characters): the value by which one grant proves it is the lock's owner.
// Every lock family draws its owner values here, so none can be guessed or
// repeated by another client (or by a later grant of the same client).
func NewToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("read crypto/rand: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
