package mpienv_test

import (
	"testing"

	"github.com/ttlpapers/ttlpapers/internal/mpienv"
)

func TestLaunched(t *testing.T) {
	for _, c := range []struct {
		env        map[string]string
		rank, size int
		ok         bool
	}{
		{map[string]string{}, 0, 0, false},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4"}, 2, 4, true},
		{map[string]string{"PMI_RANK": "1", "PMI_SIZE": "3"}, 1, 3, true},
		{map[string]string{"PMIX_RANK": "5"}, 5, 0, true},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "x", "PMI_RANK": "0", "PMI_SIZE": "2"}, 0, 2, true},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "-1"}, 0, 0, false},
	} {
		rank, size, ok := mpienv.Launched(func(k string) string { return c.env[k] })
		if rank != c.rank || size != c.size || ok != c.ok {
			t.Errorf("Launched(%v) = %d, %d, %v; want %d, %d, %v", c.env, rank, size, ok, c.rank, c.size, c.ok)
		}
	}
}
