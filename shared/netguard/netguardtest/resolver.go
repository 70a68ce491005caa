// Package netguardtest helps tests of guarded clients: a resolver that makes chosen names
// resolve to chosen addresses (a public-looking name that resolves to 127.0.0.1, as in DNS
// rebinding).
package netguardtest

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strings"
)

// Resolver answers A queries (for IPv4 addresses) and AAAA queries (for IPv6 ones) for the
// given names from memory, as a DNS server speaking over a stream would; the Go resolver runs
// unchanged on top of it. Unknown names and the other family's query get an empty answer.
func Resolver(hosts map[string]netip.Addr) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(context.Context, string, string) (net.Conn, error) {
			client, server := net.Pipe()
			go serveDNS(server, hosts)
			return client, nil
		},
	}
}

func serveDNS(c net.Conn, hosts map[string]netip.Addr) {
	defer func() { _ = c.Close() }()
	for {
		var size [2]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(c, q); err != nil || len(q) < 12 {
			return
		}
		// The question: labels up to the root, then type and class.
		i, labels := 12, []string{}
		for i < len(q) && q[i] != 0 {
			n := int(q[i])
			if i+1+n > len(q) {
				return
			}
			labels = append(labels, string(q[i+1:i+1+n]))
			i += 1 + n
		}
		if i+5 > len(q) {
			return
		}
		question := q[12 : i+5]
		qtype := binary.BigEndian.Uint16(q[i+1 : i+3])
		addr, found := hosts[strings.ToLower(strings.Join(labels, "."))]

		resp := binary.BigEndian.AppendUint16(nil, binary.BigEndian.Uint16(q[:2])) // id
		resp = append(resp, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0)                    // QR RD RA, 1 question
		resp = append(resp, question...)
		if found && (addr.Is4() && qtype == 1 || addr.Is6() && qtype == 28) {
			resp[7] = 1                                                      // one answer
			resp = append(resp, 0xc0, 12, byte(qtype>>8), byte(qtype), 0, 1) // name at offset 12, the type asked, class IN
			resp = append(resp, 0, 0, 0, 60, 0, byte(addr.BitLen()/8))       // TTL 60, 4 or 16 bytes
			resp = append(resp, addr.AsSlice()...)
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
		if _, err := c.Write(append(out, resp...)); err != nil {
			return
		}
	}
}
