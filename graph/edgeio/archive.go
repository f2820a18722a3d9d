package edgeio

import (
	"archive/tar"
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"
)

// readTar reads the one graph file of a tar archive (SuiteSparse ships
// Matrix Market files as .tar.gz, KONECT its graphs as .tar.bz2). Members
// that are not regular files or whose names say they are documentation
// (ignoredMember) are skipped. The first other member is read, as any
// input is (it may be compressed); the rest of the archive is then read
// for others: with several, the read fails listing them, unless the one
// read is the only one named after its directory (SuiteSparse's
// NAME/NAME.mtx beside NAME/NAME_coord.mtx).
func (rd *contentReader) readTar(br *bufio.Reader, dn string, depth int) error {
	tr := tar.NewReader(br)
	// Inside another archive's member, names are that member's path on.
	outer := rd.st.Member
	var all, cands []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("graph/edgeio: %s: tar archive: %w", dn, err)
		}
		all = append(all, h.Name)
		if h.Typeflag != tar.TypeReg || ignoredMember(h.Name) {
			continue
		}
		cands = append(cands, h.Name)
		if len(cands) > 1 {
			continue
		}
		rd.st.Archive, rd.st.Member = "tar", h.Name
		if outer != "" {
			rd.st.Member = outer + "/" + h.Name
		}
		if err := rd.read(bufio.NewReaderSize(tr, sniffSize), h.Name, memberName(dn, h.Name), h.Size, depth); err != nil {
			return err
		}
	}
	switch {
	case len(cands) == 0:
		return fmt.Errorf("graph/edgeio: %s: the tar archive holds no graph file (members: %s)", dn, listNames(all))
	case len(cands) > 1 && !soleNamedAfterDir(cands):
		return fmt.Errorf("graph/edgeio: %s: the tar archive holds %d graph files (%s): extract the one to count", dn, len(cands), listNames(cands))
	}
	return nil
}

// memberName names a member of archive dn in messages.
func memberName(dn, member string) string { return dn + "[" + member + "]" }

// ignoredMember reports the members of an archive that are not graphs:
// hidden files (macOS's ._ files among them), documentation, licences and
// metadata (KONECT's README.x, meta.x and ent.x files beside out.x).
func ignoredMember(name string) bool {
	base := strings.ToLower(path.Base(name))
	if strings.HasPrefix(base, ".") {
		return true
	}
	for _, p := range []string{"readme", "license", "licence", "copying", "notice", "authors", "changelog", "changes", "citation", "meta.", "ent."} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	switch path.Ext(base) {
	case ".md", ".rst", ".pdf", ".html", ".htm", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".json", ".yaml", ".yml", ".py", ".sh", ".bib":
		return true
	}
	return false
}

// soleNamedAfterDir reports whether the first of names is the only one
// whose base name, up to its first dot, is the name of its directory.
func soleNamedAfterDir(names []string) bool {
	named := func(n string) bool {
		dir := path.Base(path.Dir(n))
		stem, _, _ := strings.Cut(path.Base(n), ".")
		return dir != "." && dir != "/" && stem == dir
	}
	if !named(names[0]) {
		return false
	}
	for _, n := range names[1:] {
		if named(n) {
			return false
		}
	}
	return true
}

// listNames lists names for a message, the first ten of them.
func listNames(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}
