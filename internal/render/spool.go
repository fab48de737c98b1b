package render

import (
	"fmt"
	"os"
	"sync"
)

// Spool keeps the rendered bodies of a build's chapters in one file
// instead of in memory, so that what a build holds while it writes the
// site does not grow with the size of the book's HTML (about 65 KB a
// chapter, with highlighting; 650 MB for 10,000 chapters). A Renderer
// with a Spool writes each body there and leaves Page.HTML nil; Page.Body
// reads it back. The file is removed when the Spool is made (on systems
// that keep an open file after its removal) or when it is closed. It is
// safe for concurrent use.
type Spool struct {
	mu   sync.Mutex
	f    *os.File
	size int64
	gone bool // the file was removed when it was made
}

// NewSpool makes a spool file in dir (os.TempDir when dir is "").
func NewSpool(dir string) (*Spool, error) {
	f, err := os.CreateTemp(dir, "bookgen-bodies-*")
	if err != nil {
		return nil, fmt.Errorf("a file for the rendered chapters: %w", err)
	}
	return &Spool{f: f, gone: os.Remove(f.Name()) == nil}, nil
}

// put appends b and returns its offset.
func (s *Spool) put(b []byte) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	off := s.size
	if _, err := s.f.WriteAt(b, off); err != nil {
		return 0, fmt.Errorf("writing a rendered chapter to %s: %w", s.f.Name(), err)
	}
	s.size += int64(len(b))
	return off, nil
}

// read returns the n bytes at off.
func (s *Spool) read(off int64, n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := s.f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("reading a rendered chapter back from %s: %w", s.f.Name(), err)
	}
	return b, nil
}

// Size is the number of bytes spooled.
func (s *Spool) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// Close closes and removes the file. Pages spooled in it cannot be read
// afterwards.
func (s *Spool) Close() error {
	err := s.f.Close()
	if !s.gone {
		if rerr := os.Remove(s.f.Name()); err == nil {
			err = rerr
		}
	}
	return err
}

// spooled is where a Page's body is in a Spool.
type spooled struct {
	spool *Spool
	off   int64
	n     int
}

// Body returns the chapter's body: HTML, or what the Renderer's Spool
// holds for it. The bytes are the caller's when read from a Spool, and
// shared (not to be modified) otherwise.
func (p *Page) Body() ([]byte, error) {
	if p.body.spool == nil {
		return p.HTML, nil
	}
	return p.body.spool.read(p.body.off, p.body.n)
}

// BodyLen is the length of the chapter's body in bytes.
func (p *Page) BodyLen() int {
	if p.body.spool == nil {
		return len(p.HTML)
	}
	return p.body.n
}

// SectionText returns the plain text of section i (Sections[i].Text, or
// what the Renderer's Spool holds for it).
func (p *Page) SectionText(i int) (string, error) {
	if i < len(p.sectionText) {
		b, err := p.sectionText[i].spool.read(p.sectionText[i].off, p.sectionText[i].n)
		return string(b), err
	}
	return p.Sections[i].Text, nil
}
