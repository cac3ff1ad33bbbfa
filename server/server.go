// Package server serves one generated page set over HTTP/1.1, HTTP/2 and HTTP/3 from one handler.
package server
