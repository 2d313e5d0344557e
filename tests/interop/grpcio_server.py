"""A Python grpcio server made only of grpcio's stock servicers: health checking
(grpcio-health-checking) and server reflection (grpcio-reflection). Nothing of this project
runs in it. Prints `listening on 127.0.0.1:PORT` once it serves.

Health statuses: "" and "interop.up" SERVING, "interop.down" NOT_SERVING; "interop.flapping"
flips between SERVING and NOT_SERVING every 200 ms, so that a Watch stream keeps sending.

Usage: .tools/venv-grpcio/bin/python tests/interop/grpcio_server.py [PORT]
"""

import sys
import threading
import time
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def main() -> None:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    servicer.set("", SERVING)
    servicer.set("interop.up", SERVING)
    servicer.set("interop.down", NOT_SERVING)
    names = (health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    port = server.add_insecure_port(f"127.0.0.1:{sys.argv[1] if len(sys.argv) > 1 else 0}")
    server.start()

    def flap() -> None:
        serving = True
        while True:
            servicer.set("interop.flapping", SERVING if serving else NOT_SERVING)
            serving = not serving
            time.sleep(0.2)

    threading.Thread(target=flap, daemon=True).start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
