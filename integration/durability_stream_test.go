package integration

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// stream is the content of a file the durability test uploads, never held
// in memory: size bytes of AES-CTR keystream under a random key. Any
// section of it can be produced again, to send, to resume an upload from
// the offset a restarted server reports, or to check what was stored.
type stream struct {
	key  []byte
	size int64
}

func newStream(t testing.TB, size int64) stream {
	t.Helper()
	key := make([]byte, 16)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	return stream{key: key, size: size}
}

// section reads n bytes from off.
func (s stream) section(off, n int64) io.Reader {
	block, err := aes.NewCipher(s.key)
	if err != nil {
		panic(err) // the key is always 16 bytes
	}
	// CTR counts blocks from the IV: start at the block that holds off.
	iv := make([]byte, aes.BlockSize)
	binary.BigEndian.PutUint64(iv[8:], uint64(off/aes.BlockSize))
	r := cipher.StreamReader{S: cipher.NewCTR(block, iv), R: zeros{}}
	if skip := off % aes.BlockSize; skip > 0 {
		io.CopyN(io.Discard, r, skip)
	}
	return io.LimitReader(r, n)
}

// digest is the size and SHA1 of the whole stream.
func (s stream) digest() digest {
	h := sha1.New()
	n, _ := io.Copy(h, s.section(0, s.size))
	return digest{size: n, sha1: hex.EncodeToString(h.Sum(nil))}
}

// zeros is an endless source of zero bytes: the keystream itself is what
// CTR mode leaves of them.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// digest identifies a file's content: a prefix or a mix of two uploads has
// another one.
type digest struct {
	size int64
	sha1 string
}

func (d digest) String() string { return fmt.Sprintf("%d bytes, SHA1 %s", d.size, d.sha1) }

// digestOf reads r to the end into a digest.
func digestOf(r io.Reader) (digest, error) {
	h := sha1.New()
	n, err := io.Copy(h, r)
	return digest{size: n, sha1: hex.EncodeToString(h.Sum(nil))}, err
}

// sendStream sends a request whose body is size bytes of body and returns the
// answer with its body unread: the caller closes it.
func (c *client) sendStream(method, path string, header map[string]string, body io.Reader, size int64) (*http.Response, error) {
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	// A known length, as sync clients send it, rather than chunked
	// transfer encoding.
	req.ContentLength = size
	if size == 0 {
		req.Body = http.NoBody
	}
	req.SetBasicAuth(c.user, users[c.user])
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return resp, nil
}

// drainAnswer reads and closes the body of an answer to a request whose body
// it does not need, keeping at most the start of it for error messages.
func drainAnswer(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	io.Copy(io.Discard, resp.Body)
	return string(b)
}

// getDigest downloads path (escaped) and digests it: ok is false for a
// 404.
func (c *client) getDigest(path string) (d digest, ok bool, err error) {
	resp, err := c.sendStream(http.MethodGet, path, nil, nil, 0)
	if err != nil {
		return digest{}, false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotFound:
		return digest{}, false, nil
	case http.StatusOK:
	default:
		return digest{}, false, fmt.Errorf("GET %s: %d\n%s", path, resp.StatusCode, drainAnswer(resp))
	}
	d, err = digestOf(resp.Body)
	if err != nil {
		return digest{}, false, fmt.Errorf("GET %s: reading body: %w", path, err)
	}
	return d, true, nil
}
