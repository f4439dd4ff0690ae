package session

import (
	"math"

	"golang.org/x/sys/windows"
)

// freeSpace returns the bytes available to this process on dir's volume:
// what GetDiskFreeSpaceEx says the caller may use, which is less than the
// volume's free space when a disk quota applies to the user.
func freeSpace(dir string) (int64, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, err
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return 0, err
	}
	return int64(min(avail, math.MaxInt64)), nil
}
