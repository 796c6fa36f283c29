package strace

import "bytes"

// maxDepth bounds the nesting the tree parser follows; deeper text becomes
// NodeRaw so hostile input cannot exhaust the stack.
const maxDepth = 100

// deletedMark follows the -y decoration of an fd whose file was unlinked.
var deletedMark = []byte("(deleted)")

// tree builds argument trees into reused slices. Children are collected on
// stack and copied contiguously into nodes when their list closes, so a
// parent's Kids is a sub-slice of nodes. Slices handed out stay correct even
// if nodes later grows (the old array is not written again before reset).
type tree struct {
	src   []byte
	nodes []Node
	stack []Node
	dec   []byte
	flat  flatArgs // the current event's flat-list split (see Event.flatList)
}

// parse parses the comma-separated top-level values of src.
func (t *tree) parse(src []byte) []Node {
	t.src = src
	t.nodes = t.nodes[:0]
	t.stack = t.stack[:0]
	t.dec = t.dec[:0]
	kids, _ := t.list(0, 0, 0)
	return kids
}

// list parses values separated by ',' up to the closer (0: end of src) and
// returns them and the index after the closer. Each element is parsed in
// place in its stack slot (nodes are large: copying them is most of the
// cost), and the finished elements are moved to nodes in one copy.
func (t *tree) list(pos int, closer byte, depth int) ([]Node, int) {
	src := t.src
	base := len(t.stack)
	pos = skipSpaces(src, pos)
	if pos < len(src) && src[pos] == closer {
		return nil, pos + 1
	}
	for pos < len(src) {
		idx := len(t.stack)
		t.stack = append(t.stack, Node{})
		pos = t.elem(idx, pos, closer, depth)
		pos = skipSpaces(src, pos)
		if pos >= len(src) {
			break
		}
		c := src[pos]
		if c == ',' {
			pos = skipSpaces(src, pos+1)
			continue
		}
		if c == closer && closer != 0 {
			pos++
			break
		}
		if closer != 0 {
			break // a mismatched closer: let the caller see it
		}
		// top level: keep the rest as raw text so nothing is lost
		t.stack = append(t.stack, Node{Kind: NodeRaw, Raw: src[pos:]})
		pos = len(src)
	}
	return t.commit(base), pos
}

// commit moves stack[base:] to nodes and returns them.
func (t *tree) commit(base int) []Node {
	start := len(t.nodes)
	t.nodes = append(t.nodes, t.stack[base:]...)
	t.stack = t.stack[:base]
	return t.nodes[start:len(t.nodes):len(t.nodes)]
}

// elem parses one list element, `key=value` or `value`, into stack[idx],
// falling back to a NodeRaw covering the text up to the next ',' or closer.
func (t *tree) elem(idx, pos int, closer byte, depth int) int {
	src := t.src
	var key []byte
	if isIdentStart(src[pos]) {
		j := pos + 1
		for j < len(src) && isIdent(src[j]) {
			j++
		}
		if j < len(src) && src[j] == '=' && (j+1 >= len(src) || (src[j+1] != '=' && src[j+1] != '>')) {
			key = src[pos:j]
			pos = j + 1
		}
	}
	nmark, dmark := len(t.nodes), len(t.dec)
	end, ok := t.value(idx, pos, depth)
	if ok {
		q := skipSpaces(src, end)
		ok = q >= len(src) || src[q] == ',' || (closer != 0 && src[q] == closer)
	}
	if !ok {
		t.nodes, t.stack, t.dec = t.nodes[:nmark], t.stack[:idx+1], t.dec[:dmark]
		end = scanValueEnd(src, pos)
		t.stack[idx] = Node{Kind: NodeRaw, Raw: bytes.TrimRight(src[pos:end], " ")}
	}
	t.stack[idx].Key = key
	return end
}

// value parses into stack[idx] a primary with its postfixes (comment,
// decoration), a '|' flag set and a '=>' in/out pair.
func (t *tree) value(idx, pos int, depth int) (int, bool) {
	if depth > maxDepth {
		return pos, false
	}
	src := t.src
	start := pos
	pos, ok := t.primary(idx, pos, depth)
	if !ok {
		return pos, false
	}
	pos = t.postfix(idx, start, pos)
	if pos < len(src) && src[pos] == '|' {
		kb := len(t.stack)
		t.stack = append(t.stack, t.stack[idx])
		known, v := t.stack[idx].Known, t.stack[idx].Int
		for pos < len(src) && src[pos] == '|' {
			s := pos + 1
			k := len(t.stack)
			t.stack = append(t.stack, Node{})
			pos, ok = t.primary(k, s, depth)
			if !ok {
				t.stack = t.stack[:kb]
				return pos, false
			}
			pos = t.postfix(k, s, pos)
			known = known && t.stack[k].Known
			v |= t.stack[k].Int
		}
		kids := t.commit(kb)
		t.stack[idx] = Node{Kind: NodeFlags, Known: known, Int: v, Raw: src[start:pos], Kids: kids}
	}
	if q := skipSpaces(src, pos); q+1 < len(src) && src[q] == '=' && src[q+1] == '>' {
		r := skipSpaces(src, q+2)
		if r >= len(src) {
			return pos, false
		}
		kb := len(t.stack)
		t.stack = append(t.stack, t.stack[idx], Node{})
		end, ok := t.value(kb+1, r, depth+1)
		if !ok {
			t.stack = t.stack[:kb]
			return end, false
		}
		kids := t.commit(kb)
		t.stack[idx] = Node{Kind: NodeInOut, Raw: src[start:end], Kids: kids, Int: kids[0].Int, Known: kids[0].Known}
		pos = end
	}
	return pos, true
}

// postfix attaches trailing /* comments */ and -y decorations to stack[idx].
func (t *tree) postfix(idx, start, pos int) int {
	src := t.src
	n := &t.stack[idx]
	for {
		q := skipSpaces(src, pos)
		if q+1 < len(src) && src[q] == '/' && src[q+1] == '*' {
			e := skipComment(src, q)
			if e < 0 {
				break
			}
			n.Comment = bytes.TrimSpace(src[q+2 : e-2])
			pos = e
			continue
		}
		if pos < len(src) && src[pos] == '<' && (n.Kind == NodeInt || n.Kind == NodeIdent) && opensDecoration(src, pos) {
			e := skipDecoration(src, pos)
			if e < 0 {
				break
			}
			fd, ok := n.Int, n.Known
			if !ok {
				break
			}
			*n = Node{Kind: NodeFd, Known: true, Int: fd, Comment: n.Comment}
			t.decoration(n, src[pos+1:e-1])
			pos = e
			if bytes.HasPrefix(src[pos:], deletedMark) {
				n.Deleted = true
				pos += len(deletedMark)
			}
			continue
		}
		break
	}
	n.Raw = src[start:pos]
	return pos
}

// decoration fills the path, device and deleted mark of an fd node from the
// text between the outer '<' and '>'.
func (t *tree) decoration(n *Node, d []byte) {
	path := d
	if len(d) > 0 && d[len(d)-1] == '>' {
		if i := bytes.IndexByte(d, '<'); i >= 0 {
			path, n.Dev = d[:i], d[i+1:len(d)-1]
		}
	}
	if bytes.HasSuffix(path, deletedMark) { // older strace put the mark inside
		path, n.Deleted = bytes.TrimRight(path[:len(path)-len(deletedMark)], " "), true
	}
	if bytes.IndexByte(path, '\\') >= 0 {
		s := len(t.dec)
		t.dec = unescape(t.dec, path)
		path = t.dec[s:len(t.dec):len(t.dec)]
	}
	n.Text = path
}

// primary parses into stack[idx] a string, struct, array, number, name,
// call or "...".
func (t *tree) primary(idx, pos int, depth int) (int, bool) {
	src := t.src
	if pos >= len(src) {
		return pos, false
	}
	start := pos
	c := src[pos]
	switch {
	case c == '"':
		e := skipString(src, pos)
		if e < 0 {
			return pos, false
		}
		n := &t.stack[idx]
		*n = Node{Kind: NodeStr}
		body := src[pos+1 : e-1]
		if bytes.IndexByte(body, '\\') >= 0 {
			s := len(t.dec)
			t.dec = unescape(t.dec, body)
			n.Text = t.dec[s:len(t.dec):len(t.dec)]
		} else {
			n.Text = body
		}
		if e+2 < len(src) && src[e] == '.' && src[e+1] == '.' && src[e+2] == '.' {
			n.Truncated = true
			e += 3
		}
		n.Raw = src[start:e]
		return e, true
	case c == '{' || c == '[':
		kids, e := t.list(pos+1, closerOf(c), depth+1)
		if e < 1 || src[e-1] != closerOf(c) {
			return e, false
		}
		k := NodeStruct
		if c == '[' {
			k = NodeArray
		}
		t.stack[idx] = Node{Kind: k, Raw: src[start:e], Kids: kids}
		return e, true
	case c == '-' || isDigit(c):
		neg := c == '-'
		if neg {
			pos++
		}
		v, e, _, ok := parseUint(src, pos)
		if !ok {
			return e, false
		}
		iv := int64(v)
		if neg {
			iv = -iv
		}
		t.stack[idx] = Node{Kind: NodeInt, Known: true, Int: iv, Raw: src[start:e]}
		return e, true
	case isIdentStart(c):
		e := pos + 1
		for e < len(src) && isIdent(src[e]) {
			e++
		}
		name := src[pos:e]
		if e < len(src) && src[e] == '(' {
			kids, e2 := t.list(e+1, ')', depth+1)
			if e2 < 1 || src[e2-1] != ')' {
				return e2, false
			}
			t.stack[idx] = Node{Kind: NodeCall, Text: name, Raw: src[start:e2], Kids: kids}
			return e2, true
		}
		v, ok := constValue(name)
		t.stack[idx] = Node{Kind: NodeIdent, Known: ok, Int: v, Text: name, Raw: name}
		return e, true
	case c == '.':
		if pos+2 < len(src) && src[pos+1] == '.' && src[pos+2] == '.' {
			t.stack[idx] = Node{Kind: NodeEllipsis, Raw: src[pos : pos+3]}
			return pos + 3, true
		}
	}
	return pos, false
}
