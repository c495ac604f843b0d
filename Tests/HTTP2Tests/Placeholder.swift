// placeholder until the codec's tests land
