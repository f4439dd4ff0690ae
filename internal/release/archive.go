// This file writes the archives, byte for byte the same for the same
// input: fixed times, owners and modes, no names but the file's.

package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"io"
	"os"
	"time"
)

// exeMode is the executable's mode inside an archive.
const exeMode = 0o755

// writeTarGz writes a gzipped tar at dst holding the file src as name.
func writeTarGz(dst, src, name string, mtime time.Time) error {
	return writeArchive(dst, src, func(w io.Writer, body []byte) error {
		gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
		if err != nil {
			return err
		}
		// The gzip header's name and time stay empty: only the tar
		// carries them.
		tw := tar.NewWriter(gz)
		if err := tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeReg,
			Name:     name,
			Mode:     exeMode,
			Size:     int64(len(body)),
			ModTime:  mtime,
			Format:   tar.FormatUSTAR,
		}); err != nil {
			return err
		}
		if _, err := tw.Write(body); err != nil {
			return err
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return gz.Close()
	})
}

// writeZip writes a zip at dst holding the file src as name.
func writeZip(dst, src, name string, mtime time.Time) error {
	return writeArchive(dst, src, func(w io.Writer, body []byte) error {
		zw := zip.NewWriter(w)
		h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(exeMode)
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := f.Write(body); err != nil {
			return err
		}
		return zw.Close()
	})
}

func writeArchive(dst, src string, write func(io.Writer, []byte) error) error {
	body, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if err := write(f, body); err != nil {
		f.Close()
		os.Remove(dst)
		return err
	}
	return f.Close()
}
