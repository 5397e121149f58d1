#!/bin/sh
# The webhook's serving certificate for clusters without cert-manager (docs/kubernetes.md).
# After `kubectl apply -k deploy/`, run: deploy/scripts/webhook-certs.sh
# It makes a CA and a serving certificate for the webhook Service's DNS names with openssl,
# stores them as Secret vcflow-webhook-tls (tls.crt, tls.key, ca.crt) and patches the CA
# into every webhook of ValidatingWebhookConfiguration vcflow-webhook (caBundle). Run it
# again to rotate: no restart needed (the kubelet updates the mounted Secret within about a
# minute, and the webhook loads a changed certificate at the next TLS handshake).
#
# usage: webhook-certs.sh [--namespace NS] [--service NAME] [--secret NAME]
#                         [--webhook-config NAME] [--days N] [--out DIR]
#   --out DIR keeps the CA, certificate and key in DIR (default: a temporary directory,
#   removed at the end). kubectl (the current context) must be on PATH, and openssl.
set -eu

namespace=vcflow-system
service=vcflow-webhook
secret=vcflow-webhook-tls
config=vcflow-webhook
days=365
out=

usage() {
    sed -n '/^# usage:/,/openssl.$/s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || usage
    case $1 in
        --namespace) namespace=$2 ;;
        --service) service=$2 ;;
        --secret) secret=$2 ;;
        --webhook-config) config=$2 ;;
        --days) days=$2 ;;
        --out) out=$2 ;;
        *) usage ;;
    esac
    shift 2
done

for tool in openssl kubectl; do
    command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool is not on PATH" >&2; exit 1; }
done

if [ -n "$out" ]; then
    mkdir -p "$out"
    dir=$out
else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
fi

# The CA: self-signed, used only to sign the serving certificate below.
openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days "$days" \
    -subj "/CN=$service.$namespace CA" \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null

# The serving certificate, for every name the API server may use for the Service.
cat >"$dir/server.ext" <<EOF
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:$service, DNS:$service.$namespace, DNS:$service.$namespace.svc, DNS:$service.$namespace.svc.cluster.local
EOF
openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=$service.$namespace.svc" \
    -keyout "$dir/tls.key" -out "$dir/server.csr" 2>/dev/null
openssl x509 -req -sha256 -days "$days" -in "$dir/server.csr" \
    -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
    -extfile "$dir/server.ext" -out "$dir/tls.crt" 2>/dev/null

kubectl -n "$namespace" create secret generic "$secret" --type=kubernetes.io/tls \
    --from-file=tls.crt="$dir/tls.crt" --from-file=tls.key="$dir/tls.key" \
    --from-file=ca.crt="$dir/ca.crt" --dry-run=client -o yaml | kubectl apply -f -

# caBundle of every webhook of the configuration (a JSON patch: one `add` per webhook).
count=$(kubectl get validatingwebhookconfiguration "$config" \
    -o 'jsonpath={range .webhooks[*]}x{end}' | tr -d '\n' | wc -c)
if [ "$count" -eq 0 ]; then
    echo "error: ValidatingWebhookConfiguration $config has no webhooks" >&2
    exit 1
fi
bundle=$(base64 <"$dir/ca.crt" | tr -d '\n')
patch=
i=0
while [ "$i" -lt "$count" ]; do
    patch="$patch${patch:+,}{\"op\":\"add\",\"path\":\"/webhooks/$i/clientConfig/caBundle\",\"value\":\"$bundle\"}"
    i=$((i + 1))
done
kubectl patch validatingwebhookconfiguration "$config" --type=json -p "[$patch]"
echo "webhook certificate for $service.$namespace.svc in Secret $namespace/$secret; caBundle of $config set ($count webhooks)"
