"""`make bench`'s workloads and measurements, apart from the production packages (the layers: benchmarks may
import modelguard, services, libs and contracts; nothing imports benchmarks)."""
