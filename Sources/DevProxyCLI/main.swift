import DevProxy
print("devproxy")
